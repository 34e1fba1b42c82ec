"""The admin's anchor model: no table (``managed=False``), only its content type and its
permissions, which Django creates after ``migrate``."""

from django.db import migrations, models


class Migration(migrations.Migration):  # type: ignore[misc]  # Django ships no types
    initial = True
    dependencies: list[tuple[str, str]] = []
    operations = [
        migrations.CreateModel(
            name="MemoryGraph",
            fields=[
                (
                    "id",
                    models.AutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
            ],
            options={
                "verbose_name": "memory graph",
                "verbose_name_plural": "memory graph",
                "managed": False,
                "default_permissions": ("view", "delete"),
                "permissions": [
                    ("erase_user", "Can erase a user from the graph and the vector store")
                ],
            },
        ),
    ]
