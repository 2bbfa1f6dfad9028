-- What an image shows, in words, for whoever cannot see it (the web chat's alt text): a chart's subject, period and
-- numbers (`tools/charts.py`). Photos and files that members send have none.
ALTER TABLE media ADD COLUMN description text CHECK (length(description) <= 200);
