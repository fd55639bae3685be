# The two commands of the README: `make app` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/.installed: requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -r requirements-dev.txt
	# compat: the checkout put on sys.path by a plain .pth; the default editable mode imports a finder
	# (pathlib, importlib.util...) at every interpreter start, 11 ms of each `compile-viz` command
	$(BIN)/pip install -q -c constraints.txt --no-deps -e . --config-settings editable_mode=compat 2>/dev/null \
	  || $(BIN)/pip install -q -c constraints.txt --no-deps -e .
	touch $@

venv: $(BIN)/.installed

app: venv
	@scripts/system-deps.sh graphviz
	$(BIN)/streamlit run app.py

test: venv
	@scripts/system-deps.sh graphviz chromium
	$(BIN)/python -m pytest

.PHONY: venv app test
