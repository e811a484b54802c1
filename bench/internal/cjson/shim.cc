//go:build simdjson && cgo

// shim.cc wraps simdjson::dom::parser in a C interface for cgo.
#include <simdjson.h>

#include "shim.h"

namespace {

struct handle {
  const simdjson::implementation *impl;
  simdjson::dom::parser parser;
};

}  // namespace

extern "C" {

// SIMDJSON_VERSION is an unquoted token sequence (3.0.1).
const char *cjson_version(void) { return SIMDJSON_STRINGIFY(SIMDJSON_VERSION); }

const char *cjson_implementation(int i) {
  int k = 0;
  for (auto impl : simdjson::get_available_implementations()) {
    if (!impl->supported_by_runtime_system()) continue;
    if (k++ == i) return impl->name().c_str();
  }
  return nullptr;
}

size_t cjson_padding(void) { return simdjson::SIMDJSON_PADDING; }

void *cjson_new(const char *impl, size_t capacity) {
  const simdjson::implementation *prev = simdjson::get_active_implementation();
  const simdjson::implementation *im = prev;
  if (impl && *impl) {
    im = simdjson::get_available_implementations()[impl];
    if (!im || !im->supported_by_runtime_system()) return nullptr;
  }
  // simdjson takes the kernel from a process-wide setting when a parser
  // allocates its buffers, and keeps it afterwards. Allocating here, for
  // the whole document, binds this parser to im whatever the setting is
  // when it parses, so parsers of different kernels can alternate.
  simdjson::get_active_implementation() = im;
  auto h = new handle{im, simdjson::dom::parser()};
  auto err = h->parser.allocate(capacity);
  simdjson::get_active_implementation() = prev;
  if (err) {
    delete h;
    return nullptr;
  }
  return h;
}

const char *cjson_active(void *p) {
  return static_cast<handle *>(p)->impl->name().c_str();
}

long cjson_parse(void *p, const uint8_t *buf, size_t len) {
  auto h = static_cast<handle *>(p);
  simdjson::dom::element root;
  // The buffer is padded (see New), so simdjson need not copy it.
  if (h->parser.parse(buf, len, false).get(root)) return -1;
  return long(h->parser.implementation->n_structural_indexes);
}

// cjson_stage1 runs simdjson's first stage alone (UTF-8 check, structural
// index), through the parser's implementation, which simdjson exposes
// for benchmarking. It returns the number of structural indexes.
long cjson_stage1(void *p, const uint8_t *buf, size_t len) {
  auto h = static_cast<handle *>(p);
  auto impl = h->parser.implementation.get();
  if (impl->stage1(buf, len, simdjson::stage1_mode::regular)) return -1;
  return long(impl->n_structural_indexes);
}

// cjson_stage2 runs the second stage (tape, numbers, strings) over the
// index the last cjson_stage1 left; it may run again on the same index.
long cjson_stage2(void *p) {
  auto h = static_cast<handle *>(p);
  if (h->parser.implementation->stage2(h->parser.doc)) return -1;
  return long(h->parser.implementation->n_structural_indexes);
}

void cjson_free(void *p) { delete static_cast<handle *>(p); }

}  // extern "C"
