import sys

from nqkit.cli import main

sys.exit(main())
