#ifndef WEBMPC_OE_STUB_HOST_H
#define WEBMPC_OE_STUB_HOST_H
#include "bits.h"
oe_result_t oe_terminate_enclave(oe_enclave_t *enclave);
#endif
