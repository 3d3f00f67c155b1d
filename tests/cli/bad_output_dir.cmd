analyze
--heads
16
--ctx
2048
--output
/nonexistent-dir/x.txt
