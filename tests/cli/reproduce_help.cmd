reproduce
--help
