/* What oeedger8r generates from webmpc.edl for the trusted side (the ECALL implementations). */
#ifndef WEBMPC_T_H
#define WEBMPC_T_H
#include <stddef.h>
#include <stdint.h>
int ecall_start(uint32_t max_wires, uint64_t max_gates, uint64_t max_rots, uint64_t max_jobs, uint64_t max_memory);
int ecall_push(uint8_t from, const uint8_t *msg, size_t len);
int ecall_pull(uint8_t *to, uint8_t *buf, size_t cap, size_t *len);
int ecall_status(void);
#endif
