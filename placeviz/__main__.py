from placeviz.cli import main

raise SystemExit(main())
