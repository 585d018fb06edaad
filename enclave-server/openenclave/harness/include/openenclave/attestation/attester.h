#ifndef WEBMPC_OE_STUB_ATTESTER_H
#define WEBMPC_OE_STUB_ATTESTER_H
#include "../bits.h"
oe_result_t oe_attester_initialize(void);
oe_result_t oe_get_evidence(const oe_uuid_t *format_id, uint32_t flags, const void *custom_claims_buffer,
                            size_t custom_claims_buffer_size, const void *optional_parameters,
                            size_t optional_parameters_size, uint8_t **evidence_buffer, size_t *evidence_buffer_size,
                            uint8_t **endorsements_buffer, size_t *endorsements_buffer_size);
oe_result_t oe_free_evidence(uint8_t *evidence_buffer);
#endif
