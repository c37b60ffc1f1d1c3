"""Nothing passes between submissions, and every submission ends: isolation by class of channel.

One batch of the real `gradtutor grade`, as root, on a demo class: two colluding submissions,
graded at the same time, each try every class of channel to reach the other (a file in every
world-writable folder of the host, SysV shared memory, POSIX shared memory and message queues,
an abstract and a path Unix socket, TCP and UDP on loopback, signals to the other's processes,
/proc of host processes). Exercise 1 is answered only if the probe ran to its end, exercise k+1
only if channel k passed something, so a first-only score proves both that the probe ran and
that nothing passed; the same probes run as two plain processes on the host find every channel
(`test_each_channel_passes_between_two_plain_processes`). Beside them: a submission that stops
and freezes itself, one whose processes race any reaper (new pids every moment, SIGSTOP to
everything they can reach), and honest classmates graded before and after.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest
from hostile import kit
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.sandbox.limits import UIDS_PER_BATCH, uid_block
from gradtutor.course import Course

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's namespaces need root")]
LIMITS = "Limits(cell_seconds=12, notebook_seconds=40, memory_mib=1024)"
WINDOW = 6.0  # seconds each colluder keeps trying; both run at once, so their windows overlap
COLLUDERS = ("aa_collude_a", "aa_collude_b")  # graded first, side by side (two workers)
HONEST = ("mm_honest", "zz_honest")
CHANNELS = ("file", "sysv", "posix", "abstract", "unix_path", "tcp", "udp", "signal", "proc")

PROBE = r'''
import ctypes, os, signal, socket, time
libc = ctypes.CDLL(None, use_errno=True)
other = "b" if ROLE == "a" else "a"
found = dict.fromkeys(CHANNELS, False)
mine, theirs = f"gt-collude-{ROLE}", f"gt-collude-{other}"
libc.prctl(15, mine.encode(), 0, 0, 0)  # PR_SET_NAME: the other finds this process by name
os.umask(0)
KEY = {"a": 0x67740A, "b": 0x67740B}
PORT = {"a": 47301, "b": 47302}
made = []  # what the host control run removes afterwards
for d in DIRS:
    try:
        with open(os.path.join(d, mine), "w") as f:
            f.write(ROLE)
        made.append(os.path.join(d, mine))
    except OSError:
        pass
segment = libc.shmget(KEY[ROLE], 4096, 0o1000 | 0o666)  # IPC_CREAT
try:
    os.close(os.open(f"/dev/shm/{mine}-shm", os.O_CREAT | os.O_RDWR, 0o666))
    made.append(f"/dev/shm/{mine}-shm")
except OSError:
    pass
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
queue = libc.mq_open(f"/{mine}".encode(), os.O_CREAT | os.O_RDWR, 0o666, None)
abstract = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    abstract.bind(f"\0{mine}")
except OSError:
    pass
paths = []
for d in DIRS:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.bind(os.path.join(d, mine + ".sock"))
        paths.append(s)
        made.append(os.path.join(d, mine + ".sock"))
    except OSError:
        s.close()
tcp = socket.socket()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for s in (tcp, udp):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", PORT[ROLE]))
    except OSError:
        pass
try:
    tcp.listen(8)
except OSError:
    pass
udp.setblocking(False)

def attempt():
    for d in DIRS:
        try:
            if open(os.path.join(d, theirs)).read() == other:
                found["file"] = True
        except OSError:
            pass
    if libc.shmget(KEY[other], 0, 0) >= 0:
        found["sysv"] = True
    if os.path.exists(f"/dev/shm/{theirs}-shm") or libc.mq_open(f"/{theirs}".encode(), os.O_RDWR, 0, None) >= 0:
        found["posix"] = True
    for address, channel in ((f"\0{theirs}", "abstract"),
                             *((os.path.join(d, theirs + ".sock"), "unix_path") for d in DIRS)):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            probe.connect(address)  # succeeds only if the other's socket is there
            found[channel] = True
        except OSError:
            pass
        probe.close()
    c = socket.socket()
    c.settimeout(0.2)
    try:
        c.connect(("127.0.0.1", PORT[other]))
        found["tcp"] = True
    except OSError:
        pass
    c.close()
    try:
        udp.sendto(ROLE.encode(), ("127.0.0.1", PORT[other]))
    except OSError:
        pass
    try:
        if udp.recv(16) == other.encode():
            found["udp"] = True
    except OSError:
        pass
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if comm == theirs:
            try:
                os.kill(int(pid), 0)
                found["signal"] = True
            except OSError:
                pass
        if b"grade_cli" in cmdline or b"pytest" in cmdline:
            found["proc"] = True  # a command line of the grader (or of the host's test)

end = time.time() + WINDOW
while time.time() < end:  # the whole window: the other may still be looking
    attempt()
    time.sleep(0.1)
if CLEAN:
    for p in made:
        os.unlink(p)
    if segment >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID
    libc.mq_unlink(f"/{mine}".encode())
probe_done = True
'''


def _prelude(role: str, dirs: list[str], clean: bool) -> str:
    return (f"ROLE = {role!r}\nDIRS = {dirs!r}\nCHANNELS = {CHANNELS!r}\nWINDOW = {WINDOW!r}\n"
            f"CLEAN = {clean!r}\nfound = {{}}\nprobe_done = False")


def world_writable() -> list[str]:
    """Every world-writable folder of the host: on the root filesystem, and the usual mounts."""
    done = subprocess.run(["find", "/", "-xdev", "-type", "d", "-perm", "-0002"],
                          capture_output=True, text=True, timeout=600)
    # Other tests' temporary folders come and go while this runs: they are not a host channel.
    dirs = {d for d in done.stdout.split() if not d.startswith(tempfile.gettempdir() + "/pytest-of-")}
    for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"):
        if os.path.isdir(d) and os.stat(d).st_mode & 0o002:
            dirs.add(d)
    return sorted(dirs)


def left_behind(dirs: list[str]) -> list[str]:
    """The probe's files still in `dirs`; a folder that has gone since the scan holds none."""
    left = []
    for d in dirs:
        try:
            left += [os.path.join(d, n) for n in os.listdir(d) if n.startswith("gt-collude")]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return left


def _colluder(released: NotebookNode, role: str, dirs: list[str]) -> NotebookNode:
    nb = kit.answered(released, lambda ex: None)
    at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code") + 1
    nb.cells[at:at] = [new_code_cell(_prelude(role, dirs, False)), new_code_cell(PROBE)]
    for k, ex in enumerate(kit.exercises_of(released)):
        flag = "probe_done" if k == 0 else f"found.get({CHANNELS[k - 1]!r})"
        body = "\n".join("    " + line for line in kit.solution(ex).splitlines())
        nb.cells[kit.index(nb, f"{ex.id}-answer")].source = f"if {flag}:\n{body}\nelse:\n    {ex.answer} = ..."
    return nb


STOPPER = r'''
import os, signal, time
os.kill(os.getpid(), signal.SIGSTOP)  # stops itself (as init of its namespace: a no-op)
signal.pthread_sigmask(signal.SIG_BLOCK, set(range(1, signal.NSIG)) - {signal.SIGKILL, signal.SIGSTOP})
signal.setitimer(signal.ITIMER_REAL, 0)
signal.setitimer(signal.ITIMER_PROF, 0)
time.sleep(3600)  # frozen: every signal blocked, both cell timers off
'''

RACER = r'''
import os, signal, time
def race():
    while True:  # a new pid every moment, and SIGSTOP to every process it may signal
        try:
            os.kill(-1, signal.SIGSTOP)
        except OSError:
            pass
        try:
            pid = os.fork()
        except OSError:
            time.sleep(0.01)
            continue
        if pid:
            os._exit(0)
for _ in range(4):
    if os.fork() == 0:
        os.setsid()
        race()
time.sleep(0.5)
'''


def _after_first(released: NotebookNode, code: str) -> NotebookNode:
    nb = kit.answered(released, kit.solution)
    first = kit.exercises_of(released)[0]
    nb.cells.insert(kit.index(nb, first.id) + 1, new_code_cell(code))
    return nb


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("isolation")
    root.chmod(0o755)
    course = root / "course"
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    dirs = world_writable()
    subs = {**{name: _colluder(released, name[-1], dirs) for name in COLLUDERS},
            **dict.fromkeys(HONEST, kit.answered(released, kit.solution)),
            "racer": _after_first(released, RACER), "stopper": _after_first(released, STOPPER)}
    for student, nb in subs.items():
        kit.submit(course, student, chapter, nb)
    shm_before = _sysv_segments()
    code = ("import sys; from pathlib import Path\n"
            "from gradtutor.grading.batch import grade_cli\nfrom autograder.sandbox.limits import Limits\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers=2, "
            f"csv=None, force=False, limits={LIMITS}))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=900)  # the batch always ends
    exs = kit.exercises_of(released)
    results = {s: json.loads(Course.at(course).results_path(chapter.slug, s).read_text()) for s in subs}
    yield {"code": proc.returncode, "log": err, "pid": proc.pid, "results": results,
           "exercises": exs, "dirs": dirs, "shm_before": shm_before}
    shutil.rmtree(root, ignore_errors=True)


def _sysv_segments() -> list[list[str]]:
    """The host's SysV segments (its IPC namespace), one row of /proc/sysvipc/shm each."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [line.split() for line in lines]


def _points(result: dict) -> list[float]:
    return [e["points"] for e in result["exercises"]]


def test_the_batch_ends_and_grades_everyone(batch: dict) -> None:
    assert batch["code"] == 0, batch["log"][-3000:]
    assert "NOT graded" not in batch["log"]


@pytest.mark.parametrize("student", HONEST)
def test_honest_classmates_get_full_marks(batch: dict, student: str) -> None:
    result = batch["results"][student]
    assert result["score"] == result["max_score"] > 0 and result["reason"] == ""


@pytest.mark.parametrize("student", COLLUDERS)
def test_nothing_passes_between_colluders(batch: dict, student: str) -> None:
    """First-only: the probe ran to its end (exercise 1) and no channel passed anything."""
    result = batch["results"][student]
    exs = batch["exercises"]
    passed = [CHANNELS[k - 1] for k, e in enumerate(result["exercises"]) if k and e["points"] > 0]
    assert passed == [], passed
    assert _points(result) == [exs[0].points] + [0.0] * (len(exs) - 1)


def test_the_colluders_ran_at_the_same_time(batch: dict) -> None:
    """Their grading intervals overlap by most of a probe's window: each was there to be found."""
    spans = []
    for student in COLLUDERS:
        r = batch["results"][student]
        end = datetime.fromisoformat(r["graded_at"]).timestamp()
        spans.append((end - r["duration_s"], end))
    overlap = min(e for _, e in spans) - max(s for s, _ in spans)
    assert overlap >= WINDOW - 2, spans  # graded_at is to the second


def test_a_submission_that_stops_and_freezes_itself_is_killed(batch: dict) -> None:
    result = batch["results"]["stopper"]
    exs = batch["exercises"]
    assert _points(result) == [exs[0].points] + [0.0] * (len(exs) - 1)
    assert "longer than the limit" in result["reason"]


def test_a_submission_racing_its_reaper_is_ended(batch: dict) -> None:
    result = batch["results"]["racer"]
    assert result["score"] == result["max_score"], result["reason"]


def test_nothing_they_wrote_outlives_them(batch: dict) -> None:
    """No file in any world-writable folder, no SysV segment, no POSIX shared memory."""
    assert left_behind(batch["dirs"]) == []
    assert _sysv_segments() == batch["shm_before"]
    assert not subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout.count("67740")


def test_no_process_of_the_batch_survives(batch: dict) -> None:
    time.sleep(1)
    first = uid_block(batch["pid"])
    assert kit.processes_of_uids(range(first, first + UIDS_PER_BATCH)) == []


# --- the probes can fail: two plain processes on the host find every channel ---------------------

def test_each_channel_passes_between_two_plain_processes(tmp_path: Path) -> None:
    """The same probe, run as two ordinary processes side by side (no sandbox), finds every
    class of channel open; it cleans up after itself."""
    dirs = world_writable()
    report = "import json, sys\nprint(json.dumps(found))"
    procs = [subprocess.Popen([sys.executable, "-c", _prelude(role, dirs, True) + "\n" + PROBE + report],
                              stdout=subprocess.PIPE, text=True, cwd=tmp_path) for role in "ab"]
    found = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    for got in found:
        assert got == dict.fromkeys(CHANNELS, True), got
    assert left_behind(dirs) == []
