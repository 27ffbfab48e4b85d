"""Run a command and write its peak resident memory, in MiB, to the file
$PEAK_RSS_FILE (the most any of its processes held); exit with its code.
Usage: PEAK_RSS_FILE=F python3 tests/peak_rss.py command [args...]"""
import os
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
with open(os.environ["PEAK_RSS_FILE"], "w") as f:
    f.write("%d\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024))
sys.exit(rc if rc >= 0 else 128 - rc)
