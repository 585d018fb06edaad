/* Host-side evidence verification (oe_verify_evidence) for garblers that link the Open Enclave
 * host library: checks the quote, that its unique id (MRENCLAVE) is the pinned one, and that its
 * custom claims are the report data of the enclave's X25519 key. */
#ifndef WEBMPC_HOST_H
#define WEBMPC_HOST_H
#include <stddef.h>
#include <stdint.h>

#define WEBMPC_HOST_OK 0
#define WEBMPC_HOST_MEASUREMENT_MISMATCH 1
#define WEBMPC_HOST_REPORT_DATA_MISMATCH 2
#define WEBMPC_HOST_VERIFY_FAILED 3

int webmpc_host_verify_evidence(const uint8_t *evidence, size_t len, const uint8_t mrenclave[32],
                                const uint8_t report_data[32]);
#endif
