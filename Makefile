# Two entry points: `make lab` (students) and `make test` (everyone, and CI).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 8888

.PHONY: lab test build lint bench grade-demo clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

build: $(STAMP)
	$(VENV)/bin/gradtutor build

# Students: build missing notebooks, never overwrite one that holds their work.
lab: $(STAMP)
	$(VENV)/bin/gradtutor build --no-solutions --keep-student-work
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --port=$(PORT) --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root,)

# The scripts `gradtutor export-html` copies next to offline pages (widget manager, require.js,
# MathJax), pinned in package-lock.json; the browser tests use them too.
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $(NODE_STAMP)

node_modules: $(NODE_STAMP)

test: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check autograder exercises tests bench
	$(VENV)/bin/python -m pytest -q -ra

lint: $(STAMP)
	$(VENV)/bin/ruff check autograder exercises tests bench

bench: $(STAMP)
	$(PY) bench/run --students 40

grade-demo: $(STAMP)
	rm -rf build/demo-class
	$(VENV)/bin/gradtutor demo-class build/demo-class --students 30 --seed 1
	$(VENV)/bin/gradtutor grade build/demo-class
	$(VENV)/bin/gradtutor report build/demo-class

clean:
	rm -rf $(VENV) build course artifacts
