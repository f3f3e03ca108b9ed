# The Contexts API image used by compose.yaml (CPU-only torch keeps it small).
FROM python:3.11-slim
WORKDIR /srv/contexts
ENV HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false PIP_NO_CACHE_DIR=1
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY app ./app
COPY sql ./sql
COPY alembic ./alembic
# `--build-arg EXTRAS=e5` adds the second prose model (docs/models.md).
ARG EXTRAS=""
RUN pip install -e ".${EXTRAS:+[$EXTRAS]}"
EXPOSE 8000
CMD ["contexts", "serve"]
