# The two commands of the README: `make app` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/.installed: requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -r requirements-dev.txt
	$(BIN)/pip install -q -c constraints.txt --no-deps -e .
	touch $@

venv: $(BIN)/.installed

app: venv
	@scripts/system-deps.sh graphviz
	$(BIN)/streamlit run app.py

test: venv
	@scripts/system-deps.sh graphviz chromium
	$(BIN)/python -m pytest

.PHONY: venv app test
