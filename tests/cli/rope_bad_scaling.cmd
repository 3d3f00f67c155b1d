rope
--scaling
cubic:2
