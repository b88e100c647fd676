"""`python -m roqsim_ray`: what `roqsim campaign run ... --ray ADDRESS` calls."""

import argparse
import sys

from roqsim_ray import STOPPED, run_campaign


def main(argv=None):
    p = argparse.ArgumentParser(prog="roqsim_ray", description=__doc__)
    p.add_argument("--address", required=True, help="the Ray cluster: auto or HOST:PORT")
    p.add_argument("--exe", required=True, help="the roqsim binary (same path on every node)")
    p.add_argument("--dir", required=True, help="the campaign's output folder")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--max-retries", type=int, default=3,
                   help="Ray re-schedules a trial whose worker died this many times")
    p.add_argument("indices", nargs="*", type=int, help="the trials to run")
    a = p.parse_args(argv)
    failed = run_campaign(a.address, a.exe, a.dir, a.indices, quiet=a.quiet,
                          max_retries=a.max_retries)
    if failed is None:
        return STOPPED
    # Failed trials are marked in their folders; the table says which. Exit 0 = all handed back.
    return 0


if __name__ == "__main__":
    sys.exit(main())
