"""One module per `shoe-daemon` subcommand (see shoe_daemon.cli)."""
