from mlsmoke.cli import main

raise SystemExit(main())
