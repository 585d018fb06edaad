#ifndef WEBMPC_OE_STUB_ENCLAVE_H
#define WEBMPC_OE_STUB_ENCLAVE_H
#include "bits.h"
oe_result_t oe_random(void *data, size_t size);
#endif
