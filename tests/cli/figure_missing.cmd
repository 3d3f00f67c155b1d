figure
