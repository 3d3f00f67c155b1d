simulate
--help
