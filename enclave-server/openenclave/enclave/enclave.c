/* Trusted side of the teleport enclave: a thin shim from the EDL's ECALLs to the Rust staticlib
 * (libwebmpc_teleport.a, built no_std). Entropy comes from oe_random; the evidence binds the
 * enclave's X25519 key through oe_get_evidence's custom claims. */
#include <openenclave/enclave.h>
#include <openenclave/attestation/attester.h>
#include <openenclave/attestation/sgx/evidence.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_t.h"
#include "webmpc_teleport.h"

static WebmpcEnclave *instance;
static uint8_t *evidence_message;
static size_t evidence_message_len;

int ecall_start(uint32_t max_wires)
{
    uint8_t entropy[32], report_data[32];
    uint8_t *evidence = NULL;
    size_t evidence_len = 0, needed = 0;
    static const oe_uuid_t format = {OE_FORMAT_UUID_SGX_ECDSA};
    int rc;

    if (instance)
        return WEBMPC_ERR_REJECTED;
    if (oe_random(entropy, sizeof entropy) != OE_OK)
        return WEBMPC_ERR_NULL;
    rc = webmpc_enclave_new(entropy, sizeof entropy, max_wires, &instance);
    memset(entropy, 0, sizeof entropy);
    if (rc != WEBMPC_OK)
        return rc;
    if ((rc = webmpc_enclave_report_data(instance, report_data, sizeof report_data)) != WEBMPC_OK)
        return rc;
    if (oe_attester_initialize() != OE_OK)
        return WEBMPC_ERR_NULL;
    if (oe_get_evidence(&format, 0, report_data, sizeof report_data, NULL, 0, &evidence, &evidence_len, NULL, NULL) !=
        OE_OK)
        return WEBMPC_ERR_NULL;
    rc = webmpc_enclave_evidence_message(instance, WEBMPC_EVIDENCE_OPEN_ENCLAVE, evidence, evidence_len, NULL, 0,
                                         &needed);
    if (rc == WEBMPC_ERR_BUFFER_TOO_SMALL && (evidence_message = malloc(needed)) != NULL)
        rc = webmpc_enclave_evidence_message(instance, WEBMPC_EVIDENCE_OPEN_ENCLAVE, evidence, evidence_len,
                                             evidence_message, needed, &evidence_message_len);
    oe_free_evidence(evidence);
    return rc;
}

int ecall_evidence(uint8_t *buf, size_t cap, size_t *len)
{
    if (!evidence_message)
        return WEBMPC_ERR_NULL;
    *len = evidence_message_len;
    if (cap < evidence_message_len)
        return WEBMPC_ERR_BUFFER_TOO_SMALL;
    memcpy(buf, evidence_message, evidence_message_len);
    return WEBMPC_OK;
}

int ecall_push(uint8_t from, const uint8_t *msg, size_t len)
{
    return webmpc_enclave_push(instance, from, msg, len);
}

int ecall_pull(uint8_t *to, uint8_t *buf, size_t cap, size_t *len)
{
    return webmpc_enclave_pull(instance, to, buf, cap, len);
}

int ecall_status(void)
{
    return webmpc_enclave_status(instance);
}
