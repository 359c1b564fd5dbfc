"""Pure Punto Banco rules: cards, the tableau, coups, the shoe, settlement, odds.

Nothing in this package does I/O or reads a clock.
"""
