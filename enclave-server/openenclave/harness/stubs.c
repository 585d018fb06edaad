/* The native harness's stand-in for the Open Enclave runtime: the ECALL proxies call the trusted
 * shim directly (it is compiled into this executable with its ECALLs renamed trusted_*), oe_random
 * reads the OS CSPRNG, and evidence is an unsigned stub: "OESTUB01" || unique id (32) || custom
 * claims, which oe_verify_evidence parses back into claims. It exercises the shims' logic and the
 * claim binding; it proves nothing about hardware. */
#include <openenclave/enclave.h>
#include <openenclave/host.h>
#include <openenclave/attestation/attester.h>
#include <openenclave/attestation/verifier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webmpc_u.h"

int trusted_ecall_start(uint32_t max_wires);
int trusted_ecall_evidence(uint8_t *buf, size_t cap, size_t *len);
int trusted_ecall_push(uint8_t from, const uint8_t *msg, size_t len);
int trusted_ecall_pull(uint8_t *to, uint8_t *buf, size_t cap, size_t *len);
int trusted_ecall_status(void);

/* The stub enclave's measurement: what a verifier pins in place of MRENCLAVE. */
static const uint8_t STUB_UNIQUE_ID[32] = "webmpc/teleport/oe-harness/v1..";
static const char STUB_MAGIC[8] = {'O', 'E', 'S', 'T', 'U', 'B', '0', '1'};

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
    (void)format_id, (void)flags, (void)opt, (void)opt_size;
    if (endorsements || endorsements_size || !evidence || !evidence_size)
        return OE_INVALID_PARAMETER;
    *evidence_size = 8 + 32 + custom_size;
    if (!(*evidence = malloc(*evidence_size)))
        return OE_FAILURE;
    memcpy(*evidence, STUB_MAGIC, 8);
    memcpy(*evidence + 8, STUB_UNIQUE_ID, 32);
    memcpy(*evidence + 40, custom, custom_size);
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
    (void)format_id, (void)endorsements, (void)endorsements_size, (void)policies, (void)policies_size;
    if (n < 40 || memcmp(ev, STUB_MAGIC, 8) != 0)
        return OE_VERIFY_FAILED;
    *claims = malloc(2 * sizeof(oe_claim_t));
    (*claims)[0] = claim(OE_CLAIM_UNIQUE_ID, ev + 8, 32);
    (*claims)[1] = claim(OE_CLAIM_CUSTOM_CLAIMS_BUFFER, ev + 40, n - 40);
    *claims_length = 2;
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
    (void)path, (void)type, (void)flags, (void)settings, (void)setting_count;
    *enclave = (oe_enclave_t *)&the_enclave;
    return OE_OK;
}

oe_result_t oe_terminate_enclave(oe_enclave_t *enclave)
{
    (void)enclave;
    return OE_OK;
}

oe_result_t ecall_start(oe_enclave_t *e, int *r, uint32_t max_wires)
{
    (void)e;
    *r = trusted_ecall_start(max_wires);
    return OE_OK;
}
oe_result_t ecall_evidence(oe_enclave_t *e, int *r, uint8_t *buf, size_t cap, size_t *len)
{
    (void)e;
    *r = trusted_ecall_evidence(buf, cap, len);
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
