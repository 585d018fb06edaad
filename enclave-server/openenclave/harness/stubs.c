/* The native harness's stand-in for the Open Enclave runtime: the ECALL proxies call the trusted
 * shim directly (it is compiled into this executable with its ECALLs renamed trusted_*), oe_random
 * reads the OS CSPRNG, and evidence is an unsigned stub: "OESTUB02" || unique id (32) || signer
 * id (32) || product id (2) || security version (4) || attributes (8) || TCB status (4) || custom
 * claims, which oe_verify_evidence parses back into claims. The debug attribute is set when the
 * enclave was created with OE_ENCLAVE_FLAG_DEBUG, as on hardware. It exercises the shims' logic
 * and the claim extraction; it proves nothing about hardware. */
#include <openenclave/enclave.h>
#include <openenclave/host.h>
#include <openenclave/attestation/attester.h>
#include <openenclave/attestation/verifier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_u.h"

int trusted_ecall_start(uint32_t max_wires, uint64_t max_gates, uint64_t max_rots, uint64_t max_jobs, uint64_t max_memory);
int trusted_ecall_push(uint8_t from, const uint8_t *msg, size_t len);
int trusted_ecall_pull(uint8_t *to, uint8_t *buf, size_t cap, size_t *len);
int trusted_ecall_status(void);

/* The stub enclave's measurement and signer: what a verifier pins in place of MRENCLAVE and
 * MRSIGNER; product id and security version as enclave.conf sets them. */
static const uint8_t STUB_UNIQUE_ID[32] = "webmpc/teleport/oe-harness/v1..";
static const uint8_t STUB_SIGNER_ID[32] = "webmpc/teleport/oe-harness-signr";
static const uint16_t STUB_PRODUCT_ID = 1;
static const uint32_t STUB_SECURITY_VERSION = 1;
static const char STUB_MAGIC[8] = {'O', 'E', 'S', 'T', 'U', 'B', '0', '2'};
#define STUB_HEAD (8 + 32 + 32 + 2 + 4 + 8 + 4)

/* The flags the enclave was created with (OE_ENCLAVE_FLAG_DEBUG makes a debug enclave). */
static uint32_t created_flags;

oe_result_t oe_random(void *data, size_t size)
{
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(data, 1, size, f) : 0;
    if (f)
        fclose(f);
    return got == size ? OE_OK : OE_FAILURE;
}

oe_result_t oe_attester_initialize(void) { return OE_OK; }
oe_result_t oe_verifier_initialize(void) { return OE_OK; }

oe_result_t oe_get_evidence(const oe_uuid_t *format_id, uint32_t flags, const void *custom, size_t custom_size,
                            const void *opt, size_t opt_size, uint8_t **evidence, size_t *evidence_size,
                            uint8_t **endorsements, size_t *endorsements_size)
{
    uint64_t attributes = OE_EVIDENCE_ATTRIBUTES_SGX_REMOTE;
    uint32_t tcb = OE_SGX_TCB_STATUS_UP_TO_DATE;
    uint8_t *p;
    (void)format_id, (void)flags, (void)opt, (void)opt_size;
    if (endorsements || endorsements_size || !evidence || !evidence_size)
        return OE_INVALID_PARAMETER;
    if (created_flags & OE_ENCLAVE_FLAG_DEBUG)
        attributes |= OE_EVIDENCE_ATTRIBUTES_SGX_DEBUG;
    *evidence_size = STUB_HEAD + custom_size;
    if (!(p = *evidence = malloc(*evidence_size)))
        return OE_FAILURE;
    memcpy(p, STUB_MAGIC, 8), p += 8;
    memcpy(p, STUB_UNIQUE_ID, 32), p += 32;
    memcpy(p, STUB_SIGNER_ID, 32), p += 32;
    memcpy(p, &STUB_PRODUCT_ID, 2), p += 2;
    memcpy(p, &STUB_SECURITY_VERSION, 4), p += 4;
    memcpy(p, &attributes, 8), p += 8;
    memcpy(p, &tcb, 4), p += 4;
    memcpy(p, custom, custom_size);
    return OE_OK;
}

oe_result_t oe_free_evidence(uint8_t *evidence)
{
    free(evidence);
    return OE_OK;
}

static oe_claim_t claim(const char *name, const uint8_t *v, size_t n)
{
    oe_claim_t c = {strdup(name), malloc(n), n};
    memcpy(c.value, v, n);
    return c;
}

oe_result_t oe_verify_evidence(const oe_uuid_t *format_id, const uint8_t *ev, size_t n, const uint8_t *endorsements,
                               size_t endorsements_size, const oe_policy_t *policies, size_t policies_size,
                               oe_claim_t **claims, size_t *claims_length)
{
    static const char *names[6] = {OE_CLAIM_UNIQUE_ID, OE_CLAIM_SIGNER_ID, OE_CLAIM_PRODUCT_ID,
                                   OE_CLAIM_SECURITY_VERSION, OE_CLAIM_ATTRIBUTES, OE_CLAIM_TCB_STATUS};
    static const size_t sizes[6] = {32, 32, 2, 4, 8, 4};
    size_t at = 8;
    (void)format_id, (void)endorsements, (void)endorsements_size, (void)policies, (void)policies_size;
    if (n < STUB_HEAD || memcmp(ev, STUB_MAGIC, 8) != 0)
        return OE_VERIFY_FAILED;
    *claims = malloc(7 * sizeof(oe_claim_t));
    for (int i = 0; i < 6; i++) {
        (*claims)[i] = claim(names[i], ev + at, sizes[i]);
        at += sizes[i];
    }
    (*claims)[6] = claim(OE_CLAIM_CUSTOM_CLAIMS_BUFFER, ev + at, n - at);
    *claims_length = 7;
    return OE_OK;
}

oe_result_t oe_free_claims(oe_claim_t *claims, size_t claims_length)
{
    for (size_t i = 0; i < claims_length; i++) {
        free(claims[i].name);
        free(claims[i].value);
    }
    free(claims);
    return OE_OK;
}

static int the_enclave;

oe_result_t oe_create_webmpc_enclave(const char *path, oe_enclave_type_t type, uint32_t flags,
                                     const oe_enclave_setting_t *settings, uint32_t setting_count,
                                     oe_enclave_t **enclave)
{
    (void)path, (void)type, (void)settings, (void)setting_count;
    created_flags = flags;
    *enclave = (oe_enclave_t *)&the_enclave;
    return OE_OK;
}

oe_result_t oe_terminate_enclave(oe_enclave_t *enclave)
{
    (void)enclave;
    return OE_OK;
}

oe_result_t ecall_start(oe_enclave_t *e, int *r, uint32_t max_wires, uint64_t max_gates, uint64_t max_rots,
                        uint64_t max_jobs, uint64_t max_memory)
{
    (void)e;
    *r = trusted_ecall_start(max_wires, max_gates, max_rots, max_jobs, max_memory);
    return OE_OK;
}
oe_result_t ecall_push(oe_enclave_t *e, int *r, uint8_t from, const uint8_t *msg, size_t len)
{
    (void)e;
    *r = trusted_ecall_push(from, msg, len);
    return OE_OK;
}
oe_result_t ecall_pull(oe_enclave_t *e, int *r, uint8_t *to, uint8_t *buf, size_t cap, size_t *len)
{
    (void)e;
    *r = trusted_ecall_pull(to, buf, cap, len);
    return OE_OK;
}
oe_result_t ecall_status(oe_enclave_t *e, int *r)
{
    (void)e;
    *r = trusted_ecall_status();
    return OE_OK;
}
