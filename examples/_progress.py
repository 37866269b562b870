"""Progress bars for the examples' longer loops: tqdm's, when tqdm is installed and someone watches.

``progress(items, desc)`` gives ``items`` back wrapped in ``tqdm.auto.tqdm`` when the optional
``tqdm`` package is importable and standard error, where tqdm draws, is a terminal. Otherwise it
gives ``items`` back as they are, silently: a run whose output is captured or redirected (the
tests, a log file, CI) prints no bar, and nothing changes when tqdm is missing.
"""
import sys


def progress(items, desc="", total=None):
    """progress(items, desc="", total=None) -> ``items``, with a progress bar on a terminal."""
    if not sys.stderr.isatty():
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc, total=total, leave=False)
