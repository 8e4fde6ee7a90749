"""A test's own directory (as lit's %t), for the Python checkers of tests/*/.

tests.cmake gives each test its own directory, <build>/tests/<test-name>.tmp
(scalea_test_tmpdir in tests/CMakeLists.txt), so that tests can run side by side (ctest -j):
the checker empties it when it starts and leaves it for inspection. A checker imports this
module with its own directory's parent on sys.path:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import testdir
"""
import os
import shutil


def fresh(path):
    """PATH emptied (made if missing); returns it."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def fresh_for_check(workdir, runs, check, made):
    """The directory of a check that reads the experiments a fixture check `runs` made in RUNS
    (tests/export, tests/html): WORKDIR emptied, unless it is RUNS itself and the check reads
    them (one directory for all checks, as scripts/report_screenshots.sh runs them). Returns
    whether the experiments are missing, i.e. RUNS/MADE does not exist and the check is not
    `runs`: the check then makes them itself, in WORKDIR."""
    runs = runs or workdir
    if check == "runs" or os.path.abspath(workdir) != os.path.abspath(runs):
        shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir, exist_ok=True)
    return check != "runs" and not os.path.exists(os.path.join(runs, made))
