# fakeapi -- one plain Makefile. `make` builds into build/, `make asan`
# into build/asan/ (ASan + UBSan); `make test` runs CUnit and pytest on the
# sanitizer build. See README.md.

BUILD    ?= build
PYTHON   ?= /usr/bin/python3
PKGS      = libmicrohttpd libcjson libcurl openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CUNIT_LIBS := $(shell pkg-config --libs cunit 2>/dev/null || echo -lcunit)

WARN      = -Wall -Wextra -Wshadow -Wformat=2 -Wvla
OPT      ?= -O2 -g
SAN      ?=
# Each part sees only the headers it may use, so a forbidden arrow is a
# compile error: the provider its own and the shared utilities
# (fakeapi/util: allocation, clocks, log, result codes, digests), the
# harness those and the provider's, a client the utilities and its own.
INC_UTIL    = -Ifakeapi/util
INC_LIB     = -Ifakeapi $(INC_UTIL)
# The harness in folders that name its layers (docs/internals.md).
HX_DIRS     = run client checks report import
INC_HX      = $(INC_LIB) -Iharness $(addprefix -Iharness/,$(HX_DIRS))
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) $(WARN) $(if $(CI),-Werror) \
	      -MMD -MP $(PKG_CFLAGS) $(CFLAGS)
CFLAGS_ALL  = $(CFLAGS_BASE) $(INC_HX)
LDFLAGS_ALL = $(SAN) $(LDFLAGS)
LIBS_ALL    = $(PKG_LIBS) -lpthread -lm

UTIL_SRC    = $(wildcard fakeapi/util/*.c)
LIB_SRC     = $(filter-out fakeapi/main.c,$(wildcard fakeapi/*.c))
HX_SRC      = $(foreach d,$(HX_DIRS),$(wildcard harness/$(d)/*.c))
UNIT_SRC    = $(wildcard tests/unit/*.c)
CLIENT_DIRS = $(wildcard client-under-test/*/)

UTIL_OBJ = $(UTIL_SRC:%.c=$(BUILD)/obj/%.o)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
HX_OBJ   = $(HX_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_OBJ = $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)

# The reference client and its faulty variants: the same sources built
# with one defect switched on (-DDEFECT=name), build/clients/<name>.
CLIENT_SRC = $(wildcard client-under-test/reference/*.c)
DEFECTS    = storm nojitter solo retry4xx hidden newkey blindpost failreport memkey \
             leakkey overbudget wakeup whitespace nocap silentretry nopace fixeddelay \
             newbody giveup
CLIENTS    = $(if $(CLIENT_SRC),$(addprefix $(BUILD)/clients/,reference $(DEFECTS)))
# The client's own Retry-After parser, cross-checked in the unit tests
# against the provider's (tests/unit/test_client_retry_after.c).
CLIENT_UNIT_OBJ = $(BUILD)/obj/clients/reference/client-under-test/reference/retry_hint.o

BINS = $(BUILD)/fakeapi $(BUILD)/fakeapi-harness $(BUILD)/unit-tests $(CLIENTS)

.PHONY: all asan tsan fuzz fuzz-build deps sdk-deps test unit e2e demo bench lint fmt fmt-check clean \
	install uninstall
all: $(BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The provider's modules see no harness header.
$(LIB_OBJ) $(BUILD)/obj/fakeapi/main.o: CFLAGS_ALL = $(CFLAGS_BASE) $(INC_LIB)
$(UTIL_OBJ): CFLAGS_ALL = $(CFLAGS_BASE) $(INC_UTIL)

$(BUILD)/libfautil.a: $(UTIL_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BUILD)/libfakeapi.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BUILD)/fakeapi: $(BUILD)/obj/fakeapi/main.o $(BUILD)/libfakeapi.a $(BUILD)/libfautil.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_ALL)

$(BUILD)/fakeapi-harness: $(BUILD)/obj/harness/main.o $(HX_OBJ) $(BUILD)/libfakeapi.a \
			  $(BUILD)/libfautil.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_ALL)

# Every unit test file gets the comparing assertions that print both values.
$(UNIT_OBJ): CFLAGS_ALL += -include tests/unit/unit_assert.h
$(UNIT_OBJ): tests/unit/unit_assert.h

# ci/unit-suites: every tests/unit/test_*.c is in main.c's list (docs/internals.md).
$(BUILD)/unit-tests: $(UNIT_OBJ) $(HX_OBJ) $(CLIENT_UNIT_OBJ) $(BUILD)/libfakeapi.a \
		     $(BUILD)/libfautil.a
	@ci/unit-suites tests/unit
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_ALL) $(CUNIT_LIBS)

# A client sees the shared utilities and its own headers, never the
# provider's or the harness's, and links the utilities only.
INC_CLIENT = $(INC_UTIL) -Iclient-under-test/reference
define client_rules
$(BUILD)/obj/clients/$(1)/%.o: %.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_BASE) $$(INC_CLIENT) -DDEFECT=$(2) -c $$< -o $$@

$(BUILD)/clients/$(1): $(CLIENT_SRC:%.c=$(BUILD)/obj/clients/$(1)/%.o) $(BUILD)/libfautil.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$^ $$(LIBS_ALL)
endef
$(eval $(call client_rules,reference,none))
$(foreach d,$(DEFECTS),$(eval $(call client_rules,$(d),$(d))))

asan:
	$(MAKE) BUILD=build/asan OPT="-O1 -g" \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all

# The provider under ThreadSanitizer (build/tsan/fakeapi), for the
# concurrent load of tests/e2e/test_tsan.py.
tsan:
	$(MAKE) BUILD=build/tsan OPT="-O1 -g" SAN="-fsanitize=thread" build/tsan/fakeapi

# libFuzzer targets, one per parser (tests/fuzz/<name>.c; docs/internals.md,
# "Fuzzing"), built with clang under ASan and UBSan into build/fuzz/<name>:
# the library and the harness with coverage, each target linked with
# libFuzzer. `make fuzz` runs each for FUZZ_SECONDS from its corpus
# (tests/fuzz/corpus/<name>/) and prints its execs and coverage; `make
# test` runs each for FUZZ_TEST_SECONDS. A crash, a leak or an "internal
# error" fails the run and leaves the input in build/fuzz/crashes/.
FUZZ_TARGETS      = scenario retry_after journal recording har client_line provider
FUZZ_SECONDS     ?= 60
FUZZ_TEST_SECONDS = 3
FUZZ_SRC          = $(wildcard tests/fuzz/*.c)
FUZZ_OBJ          = $(FUZZ_SRC:%.c=$(BUILD)/obj/%.o)
FUZZ_SAN          = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		    -fno-omit-frame-pointer

fuzz-build:
	$(MAKE) BUILD=build/fuzz CC=clang OPT="-O1 -g" SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
		$(addprefix build/fuzz/,$(FUZZ_TARGETS))

fuzz: deps fuzz-build
	ci/fuzz-run build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(FUZZ_OBJ): CFLAGS_ALL += -Itests/fuzz
# the client's own Retry-After parser, beside the provider's
$(BUILD)/obj/tests/fuzz/retry_after.o: CFLAGS_ALL += -Iclient-under-test/reference

$(addprefix $(BUILD)/,$(FUZZ_TARGETS)): $(BUILD)/%: $(BUILD)/obj/tests/fuzz/%.o \
		$(BUILD)/obj/tests/fuzz/fuzz_input.o $(HX_OBJ) $(CLIENT_UNIT_OBJ) \
		$(BUILD)/libfakeapi.a $(BUILD)/libfautil.a
	$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(LIBS_ALL)

# Installs what the build and the tests need (Debian packages); quick no-op
# when everything is there.
deps:
	@ci/install-deps

unit: deps
	$(MAKE) asan
	build/asan/unit-tests

e2e: deps sdk-deps
	$(MAKE) asan
	$(MAKE) tsan
	FAKEAPI_BUILD=build/asan $(PYTHON) -m pytest -q -n 2 --dist loadgroup tests/e2e

# The openai SDK for Node.js that tests/e2e/test_openai_node.py grades, and
# the Node.js retry libraries of the stdio adapters (NODE_ADAPTERS), each
# folder installed from its lockfile (the npm registry) when it is not there
# yet or its lockfile changed since (npm ci writes node_modules/.package-lock.json).
sdk-deps: deps
	@test -d $(OPENAI_NODE)/node_modules/openai || \
		(cd $(OPENAI_NODE) && npm ci --no-audit --no-fund --loglevel=error)
	@test $(NODE_ADAPTERS)/node_modules/.package-lock.json -nt $(NODE_ADAPTERS)/package-lock.json || \
		(cd $(NODE_ADAPTERS) && npm ci --no-audit --no-fund --loglevel=error)

# The test build treats every compiler warning as an error, and the lint
# (banned calls, symbol prefixes, include circles) and the format check
# run on it too.
test: deps sdk-deps
	$(MAKE) asan CI=1
	$(MAKE) tsan CI=1
	$(MAKE) -s BUILD=build/asan lint
	$(MAKE) -s fmt-check
	build/asan/unit-tests
	$(MAKE) fuzz-build CI=1
	ci/fuzz-run build/fuzz $(FUZZ_TEST_SECONDS) $(FUZZ_TARGETS)
	FAKEAPI_BUILD=build/asan $(PYTHON) -m pytest -q -n 2 --dist loadgroup tests/e2e

DEMO_CURL = curl -sS -f --retry 4 -X {method} -H "Authorization: Bearer $$FAKEAPI_KEY" \
            -H "Content-Type: application/json" --data-binary @{body_file} {url}
# The demo runs on virtual time (docs/time-scale.md): the suite's real
# pauses (Retry-After 10 s, 60 s, a cooldown of minutes) take seconds.
DEMO_SCALE = 20
# The graded runs are expected to fail checks (curl does); the demo shows
# the reports and does not stop at their exit codes.
# The demo builds only what it runs: the harness and the reference client.
demo:
	@ci/install-deps build
	@$(MAKE) -s $(BUILD)/fakeapi-harness $(BUILD)/clients/reference
	@echo "== fakeapi-harness: the five-step suite against the reference client (time scale $(DEMO_SCALE)) =="
	-@$(BUILD)/fakeapi-harness run --time-scale $(DEMO_SCALE) scenarios/five-step/suite.json
	@echo
	@echo "== fakeapi-harness: the five-step suite against curl --retry 4 (time scale $(DEMO_SCALE)) =="
	-@$(BUILD)/fakeapi-harness run --time-scale $(DEMO_SCALE) --exec '$(DEMO_CURL)' scenarios/five-step/suite.json

# Benchmarks against nginx and of the harness (docs/bench.md); never part of `make test`.
bench: deps
	@ci/install-bench-deps
	$(MAKE) all $(BUILD)/bench-wakeup $(BUILD)/bench-delayload
	$(PYTHON) bench/run $(BUILD)

# The timer wake-up probe of bench/run's wake-up line (bench/wakeup.c).
$(BUILD)/bench-wakeup: bench/wakeup.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -lpthread

# The load generator of bench/run's delayed-answers section (bench/delayload.c).
$(BUILD)/bench-delayload: bench/delayload.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $<

lint: $(BUILD)/libfakeapi.a $(BUILD)/libfautil.a $(HX_OBJ)
	@! git grep -nE '\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gets)[[:space:]]*\(' -- '*.c' '*.h' \
		|| { echo "lint: banned calls above (docs/internals.md, Style)"; exit 1; }
	@ci/check-symbols $(BUILD)/libfakeapi.a $(BUILD)/libfautil.a $(HX_OBJ)
	@ci/include-graph --quiet || { echo "lint: include circle above (docs/internals.md, Layers)"; exit 1; }

# Every C file of the tree, as .clang-format lays it out: `make fmt`
# rewrites them, `make fmt-check` names each one it would change.
FMT_SRC = $(sort $(wildcard fakeapi/*.[ch] fakeapi/util/*.[ch] harness/*.[ch] harness/*/*.[ch] \
                            tests/unit/*.[ch] tests/fuzz/*.[ch] client-under-test/reference/*.[ch] \
                            bench/*.[ch]))

fmt:
	clang-format -i $(FMT_SRC)

fmt-check:
	@command -v clang-format >/dev/null || { echo "fmt-check: clang-format not found (ci/install-deps)"; exit 1; }
	@bad=$$(for f in $(FMT_SRC); do clang-format "$$f" | cmp -s - "$$f" || echo "$$f"; done); \
	[ -z "$$bad" ] || { printf 'fmt-check: not as .clang-format lays it out (make fmt): %s\n' $$bad; exit 1; }

# `make install`: the GNU layout under PREFIX (staged under DESTDIR): the
# three programs in bindir, the reference client in libexecdir/fakeapi,
# the built-in suites in datadir/fakeapi/scenarios, where an installed
# harness finds both, and a man page per program from its --help.
PREFIX     ?= /usr/local
bindir     ?= $(PREFIX)/bin
libexecdir ?= $(PREFIX)/libexec
datadir    ?= $(PREFIX)/share
mandir     ?= $(datadir)/man
INSTALL    ?= install
VERSION     = $(shell sed -n 's/^\#define HX_VERSION "\(.*\)"/\1/p' harness/run/run.h)
MAN_PAGES   = $(BUILD)/man/fakeapi.1 $(BUILD)/man/fakeapi-harness.1 $(BUILD)/man/fakeapi-gate.1
INSTALLED_SUITES = five-step five-step-fast provider conformance-fast incidents

$(BUILD)/man/fakeapi.1: $(BUILD)/fakeapi ci/man-page
	@mkdir -p $(dir $@)
	ci/man-page $< $(VERSION) "a fault-injecting fake API provider" > $@
$(BUILD)/man/fakeapi-harness.1: $(BUILD)/fakeapi-harness ci/man-page
	@mkdir -p $(dir $@)
	ci/man-page $< $(VERSION) "grade an HTTP retry client against a fake provider" > $@
$(BUILD)/man/fakeapi-gate.1: ci/fakeapi-gate ci/man-page
	@mkdir -p $(dir $@)
	ci/man-page $< $(VERSION) "grade a retry client with fakeapi-harness, for CI" > $@

install: $(BUILD)/fakeapi $(BUILD)/fakeapi-harness $(BUILD)/clients/reference $(MAN_PAGES)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libexecdir)/fakeapi $(DESTDIR)$(mandir)/man1
	$(INSTALL) -m 755 $(BUILD)/fakeapi $(BUILD)/fakeapi-harness $(DESTDIR)$(bindir)/
	$(INSTALL) -m 755 ci/fakeapi-gate $(DESTDIR)$(bindir)/fakeapi-gate
	$(INSTALL) -m 755 $(BUILD)/clients/reference $(DESTDIR)$(libexecdir)/fakeapi/reference
	$(INSTALL) -m 644 $(MAN_PAGES) $(DESTDIR)$(mandir)/man1/
	$(INSTALL) -d $(DESTDIR)$(datadir)/fakeapi/schemas
	$(INSTALL) -m 644 docs/scenario.schema.json docs/report.schema.json \
		docs/escalation.schema.json $(DESTDIR)$(datadir)/fakeapi/schemas/
	for d in $(INSTALLED_SUITES); do \
		$(INSTALL) -d $(DESTDIR)$(datadir)/fakeapi/scenarios/$$d && \
		$(INSTALL) -m 644 scenarios/$$d/*.json $(DESTDIR)$(datadir)/fakeapi/scenarios/$$d/ || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,fakeapi fakeapi-harness fakeapi-gate)
	rm -f $(addprefix $(DESTDIR)$(mandir)/man1/,fakeapi.1 fakeapi-harness.1 fakeapi-gate.1)
	rm -rf $(DESTDIR)$(libexecdir)/fakeapi $(DESTDIR)$(datadir)/fakeapi

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# The official openai SDK for Node.js (major 6, pinned by its lockfile),
# graded through its exec adapter on the chat endpoint's 429, 503 and
# stream scenarios (README.md, "Real SDKs"). Needs node and npm;
# tests/e2e/test_openai_node.py runs the same suite under `make test`.
# Like any graded run it may exit 1.
OPENAI_NODE = client-under-test/adapters/openai-node
# The Node.js stdio adapters (docs/adapters.md): one lockfile for got, ky,
# axios-retry, p-retry, fetch-retry, undici, openai and @anthropic-ai/sdk.
NODE_ADAPTERS = client-under-test/adapters/node
.PHONY: grade-openai-node
grade-openai-node: sdk-deps
	@$(MAKE) -s $(BUILD)/fakeapi-harness
	$(BUILD)/fakeapi-harness run --jobs 4 --exec 'node $(OPENAI_NODE)/adapter.mjs {body_file}' \
		--report-json $(BUILD)/openai-node.json scenarios/provider/openai-node/suite.json

# The real-client matrix (docs/clients.md): every adapter of
# client-under-test/matrix/clients.json graded on its suites with --strict.
# Long (minutes per client); never part of `make test`. MATRIX_ARGS passes
# options on, e.g. MATRIX_ARGS='--only curl,got'.
.PHONY: matrix
matrix: sdk-deps adapters
	@$(MAKE) -s all
	$(PYTHON) client-under-test/matrix/run --build $(BUILD) $(MATRIX_ARGS)

# Stdio adapters for real retry clients of three more ecosystems
# (client-under-test/adapters/{go,java,php}/; README.md, "Real SDKs"):
# hashicorp/go-retryablehttp, OkHttp and Guzzle, built into
# $(BUILD)/adapters/ from Debian's packages alone (`ci/install-deps
# adapters`). Never part of `make test`: `make test-adapters` runs the tests
# that pin what each library does (tests/e2e/test_adapters_go_java_php.py,
# ~35 s), `make grade-adapters` grades each on the conformance-fast suite
# (a graded run may exit 1; the loop goes on).
ADAPTERS    = client-under-test/adapters
ADAPTER_RUN = $(BUILD)/adapters/go-retryablehttp $(BUILD)/adapters/okhttp $(BUILD)/adapters/guzzle
OKHTTP_JARS = /usr/share/java/okhttp.jar /usr/share/java/okio.jar
.PHONY: adapters adapter-deps test-adapters grade-adapters
adapter-deps:
	@ci/install-deps adapters

adapters: adapter-deps
	$(MAKE) $(ADAPTER_RUN)

# GOPATH mode over Debian's Go sources, as Debian builds its own Go packages:
# module mode would need go-retryablehttp's whole module graph (go-hclog's
# test dependencies included), which no package ships and GOPROXY=off
# cannot fetch. The library's version is the installed package's.
$(BUILD)/adapters/go-retryablehttp: $(wildcard $(ADAPTERS)/go/*.go)
	@mkdir -p $(dir $@)
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(abspath $(BUILD))/go-cache GOFLAGS= \
		go build -trimpath -o $@ -ldflags "-X main.libVersion=$$(dpkg-query -W \
		-f='$${Version}' golang-github-hashicorp-go-retryablehttp-dev)" ./$(ADAPTERS)/go

$(BUILD)/adapters/okhttp.jar: $(wildcard $(ADAPTERS)/java/*.java)
	@rm -rf $(BUILD)/adapters/okhttp-classes && mkdir -p $(BUILD)/adapters/okhttp-classes
	javac -Xlint:all -Werror -d $(BUILD)/adapters/okhttp-classes \
		-cp $(subst $() ,:,$(OKHTTP_JARS)) $^
	printf 'Main-Class: OkHttpAdapter\nClass-Path: $(OKHTTP_JARS)\n' > $(BUILD)/adapters/okhttp.mf
	jar cfm $@ $(BUILD)/adapters/okhttp.mf -C $(BUILD)/adapters/okhttp-classes .

$(BUILD)/adapters/okhttp: $(BUILD)/adapters/okhttp.jar
	printf '#!/bin/sh\nexec java -jar "$$(dirname "$$0")/okhttp.jar" "$$@"\n' > $@
	chmod +x $@

$(BUILD)/adapters/guzzle: $(wildcard $(ADAPTERS)/php/*.php)
	@mkdir -p $(BUILD)/adapters/php
	for f in $^; do php -l $$f >/dev/null || exit 1; done
	cp $^ $(BUILD)/adapters/php/
	printf '#!/bin/sh\nexec php "$$(dirname "$$0")/php/guzzle.php" "$$@"\n' > $@
	chmod +x $@

grade-adapters: adapters
	@$(MAKE) -s $(BUILD)/fakeapi-harness
	for a in go-retryablehttp okhttp guzzle; do \
		$(BUILD)/fakeapi-harness run --jobs 2 --client $(BUILD)/adapters/$$a \
			--report-json $(BUILD)/adapters/$$a.json scenarios/conformance-fast/suite.json || true; \
	done

test-adapters: adapters
	$(MAKE) $(BUILD)/fakeapi $(BUILD)/fakeapi-harness
	FAKEAPI_BUILD=$(BUILD) $(PYTHON) -m pytest -q tests/e2e/test_adapters_go_java_php.py
