"""The ``loopcast`` command of an installed wheel: runs the command-line program the wheel bundles
(``loopcast/bin/loopcast``) on the presets it bundles (``loopcast/models``) unless
``$LOOPCAST_MODELS`` or ``--models`` says otherwise."""

import os
import sys


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    program = os.path.join(here, "bin", "loopcast")
    if not os.access(program, os.X_OK):
        sys.exit(f"loopcast: {program}: no command-line program in this installation (it is built with the wheel; "
                 "a source checkout has it at build/loopcast)")
    bundled = os.path.join(here, "models")
    if not os.environ.get("LOOPCAST_MODELS") and os.path.isdir(bundled):
        os.environ["LOOPCAST_MODELS"] = bundled
    os.execv(program, [program] + sys.argv[1:])
