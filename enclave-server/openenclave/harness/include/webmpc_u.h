/* What oeedger8r generates from webmpc.edl for the untrusted side (the ECALL proxies). */
#ifndef WEBMPC_U_H
#define WEBMPC_U_H
#include <openenclave/bits.h>
oe_result_t oe_create_webmpc_enclave(const char *path, oe_enclave_type_t type, uint32_t flags,
                                     const oe_enclave_setting_t *settings, uint32_t setting_count,
                                     oe_enclave_t **enclave);
oe_result_t ecall_start(oe_enclave_t *enclave, int *_retval, uint32_t max_wires, uint64_t max_gates,
                        uint64_t max_rots, uint64_t max_jobs, uint64_t max_memory);
oe_result_t ecall_push(oe_enclave_t *enclave, int *_retval, uint8_t from, const uint8_t *msg, size_t len);
oe_result_t ecall_pull(oe_enclave_t *enclave, int *_retval, uint8_t *to, uint8_t *buf, size_t cap, size_t *len);
oe_result_t ecall_status(oe_enclave_t *enclave, int *_retval);
#endif
