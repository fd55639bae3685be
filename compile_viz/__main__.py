import sys

from compile_viz.cli import main

sys.exit(main())
