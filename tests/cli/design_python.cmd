design
--heads
4
--ctx
512
--format
python
