// The C interface of shim.cc, callable from cgo.
#ifndef CJSON_SHIM_H
#define CJSON_SHIM_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
const char *cjson_version(void);
const char *cjson_implementation(int i);
size_t cjson_padding(void);
void *cjson_new(const char *impl, size_t capacity);
const char *cjson_active(void *p);
long cjson_parse(void *p, const uint8_t *buf, size_t len);
long cjson_stage1(void *p, const uint8_t *buf, size_t len);
long cjson_stage2(void *p);
void cjson_free(void *p);
#ifdef __cplusplus
}
#endif
#endif
