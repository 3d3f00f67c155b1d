figure
1a
--format
json
--ctx
256
