figure
1c
