# The project's two commands: `make run` (the tour) and `make test` (everything CI runs).
# Both first make sure an OpenCL platform exists (installing PoCL when missing).

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: setup run test fmt lint unit examples bench

setup:
	@bash scripts/setup.sh

run: setup
	$(CARGO) run --release --example tour

test: setup fmt lint unit examples

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace

examples:
	bash scripts/run-examples.sh

bench: setup
	$(CARGO) bench --bench launch
