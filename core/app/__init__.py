"""What the two doors (the Streamlit app and the CLI) call: the analyst's actions
(``actions``) with their typed results (``cli_results``), and the read models the
screens show (``*_views``), import and export."""
