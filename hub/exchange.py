"""nbgrader's exchange for a class on one server, with two holes closed.

Installed as ``gradtutor_exchange`` into both class environments (with ``hub/keepwork.py`` as
``gradtutor_keepwork``) and named in nbgrader's configuration (``ExchangeFactory``):

* ``KeepWorkFetch``: fetching an assignment a student already has keeps every file the student
  edited and says what the new release changed (``hub/keepwork.py``). Stock nbgrader refuses the
  second fetch, or with ``replace_missing_files`` copies the missing files and says nothing.
* ``PrivateSubmit``: a submission is readable by its student and the course's staff only. Stock
  nbgrader leaves it readable by everyone (files 0644) in a folder writable by everyone (0777):
  only its name, with 72 random bits, keeps other students out. Here ``inbound`` belongs to the
  group ``gradtutor-staff`` and is setgid, so each submission's folder takes that group; the
  folder is then made 0770: nobody but its student and the staff can look inside.
* ``OwnerCheckedCollect``: a submission whose folder in ``inbound`` is not owned by the student
  it names is not collected. ``inbound`` is writable by every account (mode 2733), so any
  student can make a folder named ``<another student>+<assignment>+<time>+<anything>``; stock
  nbgrader's ``check_owner`` logs a warning and collects it anyway, as the newest submission of
  that student.
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

from gradtutor_keepwork import refresh
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.submit import ExchangeSubmit


class KeepWorkFetch(ExchangeFetchAssignment):
    """nbgrader's fetch; a second fetch keeps the student's edits and writes the new release
    with ``WHAT-CHANGED.txt`` to ``<assignment>-updates/`` beside the assignment's folder (so it
    is never submitted)."""

    def init_dest(self) -> None:
        self.replace_missing_files = True
        super().init_dest()

    def do_copy(self, src: str, dest: str) -> None:
        base = (
            Path.home()
            / ".local"
            / "share"
            / "gradtutor"
            / "releases"
            / self.coursedir.course_id
            / self.coursedir.assignment_id
        )
        staged = base.with_name(base.name + ".incoming")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(src, staged, ignore=shutil.ignore_patterns(*self.coursedir.ignore))
        updates = Path(dest).with_name(Path(dest).name + "-updates")
        for line in refresh(staged, Path(dest), base, updates=updates):
            self.log.warning(line)
        shutil.rmtree(staged, ignore_errors=True)


class OwnerCheckedCollect(ExchangeCollect):
    """nbgrader's collect, taking each student's newest submission among those they own."""

    def _genuine(self, record: dict) -> bool:
        try:
            owner = pwd.getpwuid(os.lstat(os.path.join(self.inbound_path, record["filename"])).st_uid).pw_name
        except (KeyError, OSError):
            return False
        return owner == record["username"]

    def _sort_by_timestamp(self, records: list[dict]) -> list[dict]:
        ordered = super()._sort_by_timestamp(records)
        genuine = [r for r in ordered if self._genuine(r)]
        for record in ordered:
            if record not in genuine:
                self.log.error("Not collected: %s names %s but is not theirs (a forged submission)",
                               record["filename"], record["username"])
        return genuine + [r for r in ordered if r not in genuine]  # [0] is the newest genuine one

    def copy_files(self) -> None:
        """Leave out a student whose every submission is forged."""
        self.src_records = [r for r in self.src_records if self._genuine(r)]
        super().copy_files()


class PrivateSubmit(ExchangeSubmit):
    """nbgrader's submit, then nothing of the submission left for other accounts."""

    def copy_files(self) -> None:
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        # The folder took the group of the setgid inbound when it was made; nbgrader's copy then
        # cleared its setgid bit (a student cannot set it again on a group they are not in), so
        # the files written last have the student's own group. The folder's mode is the lock:
        # 0770, the staff's group, and nobody else can even look inside.
        self.set_perms(dest, fileperms=0o644, dirperms=0o750)
        os.chmod(dest, 0o770)  # the staff may delete it later, as nbgrader's 0777 intends
