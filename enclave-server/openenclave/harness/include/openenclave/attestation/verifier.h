#ifndef WEBMPC_OE_STUB_VERIFIER_H
#define WEBMPC_OE_STUB_VERIFIER_H
#include "../bits.h"
oe_result_t oe_verifier_initialize(void);
oe_result_t oe_verify_evidence(const oe_uuid_t *format_id, const uint8_t *evidence_buffer, size_t evidence_buffer_size,
                               const uint8_t *endorsements_buffer, size_t endorsements_buffer_size,
                               const oe_policy_t *policies, size_t policies_size, oe_claim_t **claims,
                               size_t *claims_length);
oe_result_t oe_free_claims(oe_claim_t *claims, size_t claims_length);
#endif
