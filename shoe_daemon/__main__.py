from shoe_daemon.cli import main

raise SystemExit(main())
