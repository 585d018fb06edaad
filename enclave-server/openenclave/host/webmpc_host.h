/* Host-side evidence verification (oe_verify_evidence) for garblers that link the Open Enclave
 * host library: verifies the quote and extracts the claims a policy needs. The policy itself is
 * webmpc_teleport::evidence (check_open_enclave: debug, signer, product, version, TCB status,
 * measurement, report data), fed from `webmpc_host --verify-evidence FILE`'s output by
 * evidence::parse_host_claims: one set of rules for every backend. */
#ifndef WEBMPC_HOST_H
#define WEBMPC_HOST_H
#include <stddef.h>
#include <stdint.h>

#define WEBMPC_HOST_OK 0
#define WEBMPC_HOST_VERIFY_FAILED 1
#define WEBMPC_HOST_MISSING_CLAIM 2

typedef struct webmpc_host_claims {
    uint8_t unique_id[32];    /* MRENCLAVE */
    uint8_t signer_id[32];    /* MRSIGNER */
    uint16_t product_id;      /* ISVPRODID */
    uint32_t security_version; /* ISVSVN */
    int debug;                /* OE_EVIDENCE_ATTRIBUTES_SGX_DEBUG */
    const char *tcb_status;   /* webmpc_teleport::evidence::TcbStatus::name */
    uint8_t report_data[32];  /* the custom claims */
} webmpc_host_claims;

int webmpc_host_extract_claims(const uint8_t *evidence, size_t len, webmpc_host_claims *out);
#endif
