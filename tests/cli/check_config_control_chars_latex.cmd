check
--config
@DATA@/config_control_chars.json
--format
latex
