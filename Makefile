# Two entry points: `make lab` (students) and `make test` (everyone, and CI).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# make test's two pytest workers (pytest-xdist): each test file stays on one worker, and the
# longest files go first (tests/conftest.py). PYTEST_WORKERS= runs everything in one process.
PYTEST_WORKERS ?= -n 2 --dist loadfile --no-loadscope-reorder
PORT   ?= 8888

.PHONY: lab test test-fast system-deps hub hub-remove build lint bench grade-demo clean

$(STAMP): pyproject.toml autograder/pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# the student runtime (autograder/, its own pyproject.toml) and the trusted package beside it
	$(PY) -m pip install --quiet -c constraints.txt -e ./autograder -e '.[dev]'
	touch $(STAMP)

build: $(STAMP)
	$(VENV)/bin/gradtutor build

# Students: the lab serves $(WORK)/, your own copy of notebooks/ that git does not track. A
# notebook is copied in when missing (or when you had not changed it and notebooks/ has a newer
# one); one you edited is never overwritten: the newer one goes to $(WORK)/updates/ with
# WHAT-CHANGED.txt. Only the student's nbgrader tools (jupyter/student/).
WORK     ?= work
LAB_ARGS ?=
lab: $(STAMP)
	$(PY) hub/keepwork.py notebooks $(WORK)
	# the self-check's practice values, computed in the background once per change of the units,
	# so that check() and review() in the lab answer at once (gradtutor.key.answer_key.warm)
	(nice $(PY) -c 'from gradtutor.key.answer_key import warm; warm()' >/dev/null 2>&1 &)
	JUPYTER_CONFIG_PATH=$(CURDIR)/jupyter/student $(VENV)/bin/jupyter lab --notebook-dir=$(WORK) \
	    --port=$(PORT) --ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

# The scripts `gradtutor export-html` copies next to offline pages (widget manager, require.js,
# MathJax), pinned in package-lock.json; the browser tests use them too.
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $(NODE_STAMP)

node_modules: $(NODE_STAMP)

# What the tests need from the system (the browser, npm, Debian's python3-venv): installed with
# apt-get as root, or one line that says what to install.
system-deps:
	@sh tools/system-deps

# The hub test (as root) removes its class but keeps /opt/gradtutor, the two environments it
# took minutes to build, for its next run; this says so, with the size. `sudo make hub-remove`
# deletes them.
test: system-deps $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check autograder gradtutor exercises tests bench hub
	$(VENV)/bin/python -m pytest -q -ra --durations=40 $(PYTEST_WORKERS); status=$$?; \
	if [ -d /opt/gradtutor ]; then echo "kept /opt/gradtutor ($$(du -sh /opt/gradtutor | cut -f1)): the hub test's environments, which its next run reuses; sudo make hub-remove deletes them"; fi; \
	exit $$status

# The edit-test loop: everything not marked slow, browser or hub (the import contract included).
test-fast: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check autograder gradtutor exercises tests bench hub
	$(VENV)/bin/python -m pytest -q -ra -m "not slow and not browser and not hub" --durations=5

# A demo class on JupyterHub at http://127.0.0.1:8000 (run as root): an instructor, a teaching
# assistant and three students as real Unix accounts (passwords in the root-only
# /srv/gradtutor/class.json: the set-up says how to read them, never prints them); the hub runs
# until Ctrl-C. `make hub-remove` deletes the accounts, the class, the group gradtutor-staff and
# /opt/gradtutor. See docs/deploy.md.
hub: system-deps $(STAMP) $(NODE_STAMP)
	$(PY) hub/classroom.py setup
	$(PY) hub/classroom.py start

hub-remove: $(STAMP)
	$(PY) hub/classroom.py remove

lint: $(STAMP)
	$(VENV)/bin/ruff check autograder gradtutor exercises tests bench hub

bench: $(STAMP)
	$(PY) bench/run --students 40

grade-demo: $(STAMP)
	rm -rf build/demo-class
	$(VENV)/bin/gradtutor demo-class build/demo-class --students 30 --seed 1
	$(VENV)/bin/gradtutor grade build/demo-class
	$(VENV)/bin/gradtutor report build/demo-class

clean:
	rm -rf $(VENV) build course artifacts
