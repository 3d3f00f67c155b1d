analyze
--help
