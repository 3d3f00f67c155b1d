/* alibi-blind: what the config.json reader (abl_config.c) shares with its helper modules. */
#ifndef ABL_CONFIG_INTERNAL_H
#define ABL_CONFIG_INTERNAL_H

#include <jansson.h>
#include "abl/model/config.h"

/* A config without a trained context (BLOOM's and Falcon's have none): the catalogue's context for the
 * model, when the config names a catalogue model of the same family and heads (`_name_or_path`), or else
 * when every catalogue entry of that family with the config's heads, head dim and layers has one and the
 * same context; s->context_src then says "catalogue: NAME". Leaves s unchanged otherwise. */
void abl_config_catalogue_context(json_t *root, abl_model_spec *s);

/* MPT: attn_config.attn_impl chooses the code path (torch -> llm-foundry-torch, flash -> flash-attention,
 * triton -> the torch path, said unmodelled in the source); absent: the family's default. ABL_ERR_PARSE with
 * *msg for a value that is not one of the three (abl_config_mpt.c). */
abl_status abl_config_mpt_attn_impl(json_t *root, abl_model_spec *s, char **msg);

/* The fields beyond heads, slopes and code path that the model's attention depends on (abl_config_fields.c):
 * BTLM/jais alibi_scaling (factor: s->slope_divisor; train_seq_len: s->alibi_train_seq_len, used by
 * abl_model_spec_schedule_keys for a run beyond it), mup_scale_qk_dot_by_d and MPT's
 * attn_config.clip_qkv (noted: they scale or bound the scores, not the bias). The notes are appended to the
 * pipeline's source (s->kernel_note owns the text). ABL_ERR_PARSE with *msg for a malformed value. */
abl_status abl_config_kernel_fields(json_t *root, abl_model_spec *s, char **msg);

/* The schedule of a spec with s->slope_divisor: slopes:RN32(RN32(m_h) / RN32(F)) for each head h of the spec's
 * press/mpt schedule, exact values (abl_config_fields.c). */
abl_status abl_config_scaled_slopes(const abl_model_spec *s, abl_schedule_spec *out);

#endif
