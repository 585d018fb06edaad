/* Trusted side of the teleport enclave: a thin shim from the EDL's ECALLs to the Rust staticlib
 * (libwebmpc_teleport.a, built no_std). Entropy comes from oe_random. The evidence is made when
 * the session's challenge arrives (both verifiers' fresh nonces): oe_get_evidence binds the
 * report data the instance asks for — its X25519 key and the two nonces — as custom claims. */
#include <openenclave/enclave.h>
#include <openenclave/attestation/attester.h>
#include <openenclave/attestation/sgx/evidence.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_t.h"
#include "webmpc_teleport.h"

static WebmpcEnclave *instance;

int ecall_start(uint32_t max_wires, uint64_t max_gates, uint64_t max_rots, uint64_t max_jobs, uint64_t max_memory)
{
    uint8_t entropy[32];
    WebmpcLimits limits = {max_wires, max_gates, max_rots, max_jobs, max_memory};
    int rc;

    if (instance)
        return WEBMPC_ERR_REJECTED;
    if (oe_random(entropy, sizeof entropy) != OE_OK)
        return WEBMPC_ERR_NULL;
    rc = webmpc_enclave_new(entropy, sizeof entropy, &limits, &instance);
    memset(entropy, 0, sizeof entropy);
    if (rc == WEBMPC_OK && oe_attester_initialize() != OE_OK)
        return WEBMPC_ERR_NULL;
    return rc;
}

/* Answers an evidence request, if the last message made one. */
static int attest(void)
{
    static const oe_uuid_t format = {OE_FORMAT_UUID_SGX_ECDSA};
    uint8_t report_data[32];
    uint8_t *evidence = NULL;
    size_t evidence_len = 0;
    int rc = webmpc_enclave_evidence_request(instance, report_data, sizeof report_data);

    if (rc == WEBMPC_EMPTY)
        return WEBMPC_OK;
    if (rc != WEBMPC_OK)
        return rc;
    if (oe_get_evidence(&format, 0, report_data, sizeof report_data, NULL, 0, &evidence, &evidence_len, NULL, NULL) !=
        OE_OK)
        return WEBMPC_ERR_NULL;
    rc = webmpc_enclave_attest(instance, WEBMPC_EVIDENCE_OPEN_ENCLAVE, evidence, evidence_len);
    oe_free_evidence(evidence);
    return rc;
}

int ecall_push(uint8_t from, const uint8_t *msg, size_t len)
{
    int rc = webmpc_enclave_push(instance, from, msg, len);
    return rc == WEBMPC_OK ? attest() : rc;
}

int ecall_pull(uint8_t *to, uint8_t *buf, size_t cap, size_t *len)
{
    return webmpc_enclave_pull(instance, to, buf, cap, len);
}

int ecall_status(void)
{
    return webmpc_enclave_status(instance);
}
