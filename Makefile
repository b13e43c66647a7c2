# guidepub: run `make help` for the targets.
GO        ?= go
PKGS      ?= ./...
STATICCHECK_VERSION ?= v0.8.2
KUBECONFORM_VERSION ?= v0.8.0
BIN       ?= bin/guidepub
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

.PHONY: help run test lint bench fuzz build image

# help expands the variables a help text names, so it shows their values.
help: ## show this help
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -e 's|$$(IMAGE)|$(IMAGE)|g' -e 's|$$(BIN)|$(BIN)|g' | \
	  awk -F':.*## ' '{printf "  make %-6s %s\n", $$1, $$2}'

# run builds and runs the binary rather than "go run", which exits 1 on
# Ctrl-C (make then reports an error) and for any failure of guidepub.
# ADDR, when set, is dev's --addr (default 127.0.0.1:8080).
ADDR      ?=

run: build ## export the embedded sample bundles and serve them with the sidecar ($(BIN) dev; ADDR=127.0.0.1:8090 listens there)
	$(BIN) dev$(if $(ADDR), --addr $(ADDR))

# SKIPS collects the reason of each test skipped because a tool or server
# is missing (fixtures.Missing writes them there: go test shows a passing
# package's skips only with -v); test prints them after go test's lines,
# when there are any. With GUIDEPUB_TEST_REQUIRE=1, as in CI, those tests
# fail instead, and go test's lines come last.
SKIPS     ?= bin/test-skips.txt

test: ## run every test (set GUIDEPUB_TEST_REQUIRE=1 to fail instead of skip when PostgreSQL, nginx... are missing)
	@mkdir -p $(dir $(SKIPS)) && : > $(SKIPS)
	@echo "$(GO) test -count=1 -timeout 30m $(PKGS)"
	@GUIDEPUB_TEST_SKIPS=$(abspath $(SKIPS)) $(GO) test -count=1 -timeout 30m $(PKGS); st=$$?; \
	  if [ -s $(SKIPS) ]; then echo; echo "Skipped, for want of a tool or server (GUIDEPUB_TEST_REQUIRE=1 makes these failures):"; \
	  sort $(SKIPS) | sed 's/^/  /'; fi; exit $$st

OPENAPI_LINT = site/openapi/lint

lint: ## gofmt, go mod tidy, go vet, no function over 80 lines, staticcheck, Redocly's OpenAPI linter and kubeconform on deploy/kubernetes
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) run ./cmd/codeshape
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)
	@[ -d $(OPENAPI_LINT)/node_modules ] || npm ci --prefix $(OPENAPI_LINT) --no-audit --no-fund
	@out=$$(REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(OPENAPI_LINT)/node_modules/.bin/redocly lint \
	  --config $(OPENAPI_LINT)/redocly.yaml --max-problems 50 site/openapi/openapi.json 2>&1); st=$$?; echo "$$out"; \
	  [ $$st -eq 0 ] || exit $$st; if echo "$$out" | grep -Eq 'You have [0-9]+ warnings?'; then \
	  echo "openapi.json: fix the warnings, or explain them in $(OPENAPI_LINT)/.redocly.lint-ignore.yaml"; exit 1; fi
	GO=$(GO) KUBECONFORM_VERSION=$(KUBECONFORM_VERSION) deploy/kubernetes/lint/lint.sh

BENCH     ?= .

bench: ## run the benchmarks (narrow with PKGS=... BENCH=regexp) and rewrite their rows in docs/benchmarks.md
	@mkdir -p bin
	@st=0; $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 90m $(PKGS) > bin/bench.txt 2>&1 || st=$$?; \
	cat bin/bench.txt; $(GO) run ./cmd/benchreport -in bin/bench.txt -doc docs/benchmarks.md && exit $$st
	@if [ "$(PKGS)" = "./..." ] && [ "$(BENCH)" = "." ]; then \
	  GUIDEPUB_LIGHTHOUSE=1 $(GO) test -count=1 -run TestLighthouse -v ./cmd/guidepub/; fi

fuzz: ## fuzz the bundle parser, the request handling of the sidecar and serve, and the JPEG decoder for a while
	$(GO) test -run '^$$' -fuzz FuzzParseBundle -fuzztime 60s -fuzzminimizetime 5s ./exporter/bundle
	$(GO) test -run '^$$' -fuzz FuzzPortalRequest -fuzztime 60s -fuzzminimizetime 5s ./sidecar
	$(GO) test -run '^$$' -fuzz FuzzServeHTTP -fuzztime 60s -fuzzminimizetime 5s ./site/serve
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 60s -fuzzminimizetime 5s ./exporter/media/jpegscale

build: ## build a static binary into $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.buildVersion=$(VERSION)" -o $(BIN) ./cmd/guidepub

IMAGE     ?= guidepub:latest

image: build ## build the container image $(IMAGE) FROM scratch from $(BIN) (podman or docker)
	deploy/image.sh $(BIN) $(IMAGE)
