reproduce
--format
json
