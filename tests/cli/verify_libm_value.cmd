verify
--libm=yes
