check
--config
@DATA@/config_control_chars.json
--format
markdown
