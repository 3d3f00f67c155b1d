verify
--dtype
e20m44
